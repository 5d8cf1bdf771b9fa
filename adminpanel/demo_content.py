"""The demo schools, their FAQ knowledge and example families, loaded by `manage.py seed_demo`.

FAQ entries name their related topics by key; the seed command turns the keys
into the related entries' questions. Public holidays are listed by date; the
seed keeps the ones in the coming weeks. The families book the tours that fill
the desk's default week (DESK_TOURS_PER_DAY on every open day, today's too), and
the callbacks are due around today, one of them overdue.
"""

import datetime as dt

from bookings.services import ChildDetails

D = dt.date
DESK_TOURS_PER_DAY = 2

# --- Tampines Green International School (Singapore) -----------------------------

TAMPINES_SCHOOL = {
    "slug": "tampines",
    "name": "Tampines Green International School",
    "time_zone": "Asia/Singapore",
    "address": "21 Tampines Avenue 9, Singapore 529770",
    "contact_email": "admissions@tampinesgreen.edu.sg",
    "contact_phone": "+6567861234",
    "default_phone_region": "SG",
    "tour_start_times": ["09:00", "11:00", "14:00", "16:00"],
    "tour_duration_minutes": 60,
    "seats_per_tour": 5,
    "max_advance_days": 30,
    "min_notice_hours": 24,
    "closed_weekdays": [5, 6],
    "chatwoot_inbox_ids": [1],
    "whatsapp_phone_number_id": "",
    "is_active": True,
}

TAMPINES_HOLIDAYS = [
    (D(2026, 12, 25), "Christmas Day"),
    (D(2027, 1, 1), "New Year's Day"),
    (D(2027, 2, 8), "Chinese New Year (second day, observed)"),
    (D(2027, 3, 26), "Good Friday"),
    (D(2027, 8, 9), "National Day"),
]

TAMPINES_FAQS = [
    {
        "key": "fees",
        "question": "How much are the school fees?",
        "answer": (
            "Annual tuition fees for the 2026/27 academic year, in Singapore dollars and including GST: "
            "Nursery and Kindergarten (ages 3-5) S$24,800; Primary, Years 1-6, S$32,400; Lower Secondary, "
            "Years 7-9, S$36,900; IGCSE, Years 10-11, S$38,600; IB Diploma, Years 12-13, S$41,200. "
            "There is also a one-off application fee of S$535 and a refundable enrolment deposit of S$3,000. "
            "Fees are invoiced per term (three terms a year)."
        ),
        "tags": ["fees", "tuition", "cost", "price", "school fees", "annual fees", "how much"],
        "related": ["fees_included", "payment_plans", "sibling_discount", "scholarships"],
        "translations": {
            "zh-hans": {
                "question": "学费是多少？",
                "answer": (
                    "2026/27学年的年度学费（新元，含消费税）：幼儿班和幼稚园（3至5岁）S$24,800；小学（一至六年级）"
                    "S$32,400；初中（七至九年级）S$36,900；IGCSE（十至十一年级）S$38,600；IB文凭（十二至十三年级）"
                    "S$41,200。另有一次性报名费S$535，以及可退还的入学押金S$3,000。学费每学期收取一次（每年三个学期）。"
                ),
            },
            "ms": {
                "question": "Berapakah yuran sekolah?",
                "answer": (
                    "Yuran tahunan bagi tahun akademik 2026/27, dalam dolar Singapura termasuk GST: Taska dan Tadika "
                    "(umur 3-5) S$24,800; Sekolah Rendah, Tahun 1-6, S$32,400; Menengah Rendah, Tahun 7-9, S$36,900; "
                    "IGCSE, Tahun 10-11, S$38,600; Diploma IB, Tahun 12-13, S$41,200. Terdapat juga yuran permohonan "
                    "sekali sahaja S$535 dan deposit pendaftaran S$3,000 yang akan dikembalikan. Yuran dibayar setiap "
                    "penggal (tiga penggal setahun)."
                ),
            },
            "ta": {
                "question": "பள்ளிக் கட்டணம் எவ்வளவு?",
                "answer": (
                    "2026/27 கல்வியாண்டுக்கான ஆண்டுக் கட்டணம் (சிங்கப்பூர் டாலரில், GST உட்பட): நர்சரி மற்றும் மழலையர் "
                    "பள்ளி (3-5 வயது) S$24,800; தொடக்கப் பள்ளி, 1-6 ஆம் ஆண்டு, S$32,400; கீழ்நிலை இடைநிலை, 7-9 ஆம் "
                    "ஆண்டு, S$36,900; IGCSE, 10-11 ஆம் ஆண்டு, S$38,600; IB டிப்ளோமா, 12-13 ஆம் ஆண்டு, S$41,200. "
                    "ஒருமுறை விண்ணப்பக் கட்டணம் S$535, திருப்பித் தரப்படும் சேர்க்கை வைப்புத்தொகை S$3,000. கட்டணம் "
                    "ஒவ்வொரு பருவத்துக்கும் (ஆண்டுக்கு மூன்று பருவங்கள்) வசூலிக்கப்படும்."
                ),
            },
        },
    },
    {
        "key": "fees_included",
        "question": "What do the fees include, and are there extra costs?",
        "answer": (
            "Tuition covers teaching, textbooks and learning materials, school iPads in Nursery to Year 4, "
            "most day trips, CCAs run by our own teachers, and IGCSE and IB exam entry fees. Not included: "
            "lunch (about S$7-8.50 a day), the school bus, uniform, overnight residential trips from Year 5 "
            "(S$600-1,400) and CCAs run by outside coaches, such as swim squad or music lessons (from S$280 a term)."
        ),
        "tags": ["extra costs", "included", "hidden fees", "additional fees", "what the fees cover", "extras"],
        "related": ["fees", "payment_plans", "ccas"],
    },
    {
        "key": "payment_plans",
        "question": "Can fees be paid in instalments?",
        "answer": (
            "Yes. Fees are invoiced termly by default, due two weeks before each term starts. You can also pay "
            "monthly by GIRO over ten months (August to May) for a S$150 annual administration charge, or pay "
            "the whole year upfront and receive a 2% early-payment discount. We accept GIRO, PayNow, bank "
            "transfer and credit card (card payments carry a 1.8% surcharge). If your employer pays your fees, "
            "we can invoice the company directly."
        ),
        "tags": ["payment", "instalments", "monthly payments", "giro", "paynow", "pay", "payment plan",
                 "corporate invoice", "credit card"],
        "related": ["fees", "sibling_discount"],
    },
    {
        "key": "sibling_discount",
        "question": "Is there a sibling discount?",
        "answer": (
            "Yes. Families with more than one child enrolled at the same time receive 5% off tuition for the "
            "second child, 10% for the third and 15% for the fourth and any further children. The discount "
            "applies to the younger children's tuition, is applied automatically once the siblings are enrolled, "
            "and cannot be combined with a corporate fee agreement."
        ),
        "tags": ["sibling", "siblings", "discount", "brother", "sister", "second child", "multiple children"],
        "related": ["fees", "payment_plans", "scholarships"],
    },
    {
        "key": "scholarships",
        "question": "Do you offer scholarships or financial aid?",
        "answer": (
            "We award up to six Tampines Green Scholarships each year for students entering Year 7 or Year 12: "
            "academic, music and sport scholarships worth 25% to 50% of tuition. Applications open on 1 February, "
            "with assessments and interviews in March. We also have a small means-tested bursary fund for current "
            "families whose circumstances change. Ask admissions for the application form."
        ),
        "tags": ["scholarship", "bursary", "financial aid", "financial assistance", "reduced fees", "merit"],
        "related": ["fees", "sibling_discount", "results"],
    },
    {
        "key": "curriculum",
        "question": "What curriculum do you follow?",
        "answer": (
            "We follow the English National Curriculum adapted for Singapore, leading to Cambridge IGCSEs in "
            "Year 11 and the International Baccalaureate (IB) Diploma in Years 12 and 13. Early Years follow the "
            "EYFS framework with a play-based, inquiry-led approach, and we use Singapore Maths from Year 1 to 6."
        ),
        "tags": ["curriculum", "syllabus", "IB", "IGCSE", "Cambridge", "British curriculum", "national curriculum",
                 "EYFS", "Singapore maths", "subjects"],
        "related": ["stem", "languages", "assessment", "results"],
    },
    {
        "key": "stem",
        "question": "Do you have a STEM or robotics programme?",
        "answer": (
            "Yes. STEM starts in Kindergarten. Primary pupils have a weekly Makers lesson in our Innovation Lab "
            "(Lego Spike, micro:bit, 3D printing), Years 5-9 learn Python coding, and our robotics team competes in "
            "the World Robot Olympiad Singapore and FIRST Lego League. Secondary students can take IGCSE and IB "
            "Computer Science, Physics and Design Technology. The Robotics CCA meets on Tuesdays and Thursdays "
            "until 16:30."
        ),
        "tags": ["STEM", "robotics", "coding", "science", "technology", "engineering", "innovation lab",
                 "computer science", "lego"],
        "related": ["curriculum", "ccas", "facilities"],
    },
    {
        "key": "lunch",
        "question": "Is lunch provided at school?",
        "answer": (
            "Yes. Our canteen caterer cooks on site and serves a hot lunch every day, with an Asian and a Western "
            "choice, a vegetarian option, a salad bar and fruit. Lunch costs S$7.20 a day in Primary and S$8.50 "
            "in Secondary, paid with the cashless student card, or you can pre-order a term's lunches in the "
            "Parent App. Children may bring a packed lunch instead. Early Years children get a morning snack, "
            "included in their fees."
        ),
        "tags": ["lunch", "food", "canteen", "meals", "eat", "catering", "snacks", "packed lunch"],
        "related": ["dietary", "hours", "fees_included"],
        "translations": {
            "zh-hans": {
                "question": "学校提供午餐吗？",
                "answer": (
                    "提供。我们的食堂承办商在校内烹煮，每天供应热午餐，有亚洲和西式两种选择、素食、沙拉吧和水果。小学午餐"
                    "每天S$7.20，中学S$8.50，用无现金学生卡支付，也可以在家长应用程序里预订整个学期的午餐。孩子也可以"
                    "自带午餐。幼儿部的孩子有上午点心，已包含在学费里。"
                ),
            },
        },
    },
    {
        "key": "dietary",
        "question": "Can you cater for food allergies and special diets?",
        "answer": (
            "Yes. The canteen is halal-certified and offers vegetarian meals every day; vegan, gluten-free and "
            "other diets can be arranged with the caterer. List any allergies on the medical form at enrolment: "
            "our nurse writes an allergy care plan, the canteen keeps photo allergy cards, and staff are trained "
            "to use EpiPens. We are a nut-aware school, so please don't pack nuts."
        ),
        "tags": ["allergies", "allergy", "dietary requirements", "halal", "vegetarian", "vegan", "gluten free",
                 "nuts", "special diet", "epipen"],
        "related": ["lunch", "nurse"],
    },
    {
        "key": "bus",
        "question": "Is there a school bus service?",
        "answer": (
            "Yes. Our partner GreenLine Transport runs door-to-door air-conditioned buses covering Tampines, Pasir "
            "Ris, Bedok, Simei, Punggol, Sengkang, Changi and the East Coast. Every bus has a trained bus aunty or "
            "uncle, seat belts and GPS tracking you can follow in the Parent App. Two-way service costs from "
            "S$1,150 a term (within 5 km) to S$1,650 a term (over 10 km); one-way is 65% of that. Apply in the "
            "Parent App at least two weeks before your child starts."
        ),
        "tags": ["bus", "school bus", "transport", "transportation", "bus fee", "pick up", "drop off", "commute"],
        "related": ["location", "hours", "security"],
        "translations": {
            "zh-hans": {
                "question": "有校车服务吗？",
                "answer": (
                    "有。我们的合作伙伴 GreenLine Transport 提供门到门的冷气校车，覆盖淡滨尼、巴西立、勿洛、四美、"
                    "榜鹅、盛港、樟宜和东海岸。每辆校车都有受过训练的车姨或车叔、安全带和GPS定位，可以在家长应用程序里查看。"
                    "双程服务每学期S$1,150（5公里内）至S$1,650（10公里以上）；单程为其65%。请在孩子入学前至少两周"
                    "通过家长应用程序申请。"
                ),
            },
            "ms": {
                "question": "Adakah perkhidmatan bas sekolah?",
                "answer": (
                    "Ya. Rakan kongsi kami GreenLine Transport menyediakan bas berhawa dingin dari pintu ke pintu di "
                    "Tampines, Pasir Ris, Bedok, Simei, Punggol, Sengkang, Changi dan East Coast. Setiap bas ada "
                    "pengiring terlatih, tali pinggang keledar dan GPS yang boleh diikuti dalam Aplikasi Ibu Bapa. "
                    "Perkhidmatan dua hala dari S$1,150 sepenggal (dalam 5 km) hingga S$1,650 sepenggal (lebih 10 km); "
                    "sehala 65% daripadanya. Mohon dalam Aplikasi Ibu Bapa sekurang-kurangnya dua minggu sebelum anak "
                    "anda bermula."
                ),
            },
        },
    },
    {
        "key": "location",
        "question": "Where is the school and how do we get there?",
        "answer": (
            "We are at 21 Tampines Avenue 9, Singapore 529770, a 10-minute walk from Tampines West MRT station "
            "(Downtown Line). Buses 3, 29 and 39 stop outside the main gate. By car, enter from Tampines "
            "Avenue 9; the visitor car park is beside the Main Reception."
        ),
        "tags": ["location", "address", "directions", "MRT", "public transport", "how to get there", "map",
                 "where"],
        "related": ["tour_parking", "bus"],
    },
    {
        "key": "uniform",
        "question": "What is the school uniform and where do I buy it?",
        "answer": (
            "Primary children wear a green polo shirt with the school crest, navy shorts or skort and black shoes; "
            "Secondary students wear a white shirt, green house tie and navy trousers or skirt. Everyone has a PE "
            "kit in their house colour. Uniform is compulsory from Year 1; Early Years children wear the school "
            "T-shirt. Buy it at the Uniform Shop beside the Main Reception (Monday, Wednesday and Friday, "
            "08:00-10:00) or in the Parent App. A full Primary set costs about S$260, and the PTA runs a "
            "second-hand uniform sale every term."
        ),
        "tags": ["uniform", "dress code", "clothes", "uniform shop", "PE kit", "shoes", "what to wear"],
        "related": ["fees_included", "hours"],
    },
    {
        "key": "apply",
        "question": "How do I apply for a place?",
        "answer": (
            "1) Book a campus tour. 2) Submit the online application on our website with a copy of your child's "
            "passport, their last two school reports and the S$535 application fee. 3) Your child takes a short "
            "assessment (English and Maths from Year 2; a play-based session for Early Years), in person or online "
            "if you're overseas. 4) We make an offer within 10 working days. 5) Accept by paying the S$3,000 "
            "enrolment deposit. Foreign students also need a Student's Pass, which we apply for with you."
        ),
        "tags": ["apply", "application", "admission", "admissions process", "enrol", "enrolment", "register",
                 "how to join", "documents"],
        "related": ["start_dates", "age", "waitlist", "student_pass"],
    },
    {
        "key": "start_dates",
        "question": "When does the school year start, and can my child join mid-year?",
        "answer": (
            "Our academic year runs from mid-August to late June, in three terms. Most children join in August, but "
            "we accept students throughout the year whenever there is a place in their year group, usually from the "
            "start of a week. Applications for August open on 1 October of the previous year; we recommend "
            "applying 6-9 months ahead for popular year groups."
        ),
        "tags": ["start date", "intake", "academic year", "join mid-year", "when to apply", "enrolment dates",
                 "deadline", "august", "new term"],
        "related": ["apply", "waitlist", "holidays"],
    },
    {
        "key": "waitlist",
        "question": "Is there a waiting list?",
        "answer": (
            "Some year groups are full: at the moment Year 2, Year 5 and Year 10 have waiting lists, and other year "
            "groups have places now. If there is no place, your child joins the waiting list after the assessment, "
            "ranked by application date, with priority for siblings and children of staff. We offer places as they "
            "come up and update you every term."
        ),
        "tags": ["waiting list", "waitlist", "full", "availability", "places available", "spaces", "vacancies"],
        "related": ["apply", "start_dates"],
    },
    {
        "key": "age",
        "question": "What age does my child need to be to start?",
        "answer": (
            "We take children from age 3 (Nursery) to 18. Children are placed by their age on 31 August: Nursery "
            "at 3, Kindergarten 1 at 4, Kindergarten 2 at 5, Year 1 at 5 turning 6, Year 7 at 11 and Year 12 at 16. "
            "Nursery children should be toilet-trained. After the assessment we may place a child a year up or "
            "down if that suits them better."
        ),
        "tags": ["age", "age requirement", "how old", "minimum age", "year group", "cut-off date", "nursery",
                 "kindergarten"],
        "related": ["apply", "class_size", "hours"],
    },
    {
        "key": "class_size",
        "question": "How big are the classes?",
        "answer": (
            "Classes are kept small: at most 18 children in Nursery and Kindergarten, with a teacher and a "
            "full-time teaching assistant; at most 22 in Primary and Secondary; IB Diploma classes usually have "
            "8-15 students. Our overall student-to-teacher ratio is 10:1."
        ),
        "tags": ["class size", "students per class", "ratio", "teacher ratio", "small classes",
                 "how many children"],
        "related": ["teachers", "sen"],
    },
    {
        "key": "teachers",
        "question": "Who are the teachers and what qualifications do they have?",
        "answer": (
            "All class and subject teachers hold a recognised teaching qualification (PGCE or equivalent) and a "
            "degree in their subject, and most have at least five years' experience in the UK, Australia or other "
            "international schools. Mandarin is taught by native speakers. Every staff member is background-checked "
            "and trained in child protection. Our teachers stay: on average they have been with us six years."
        ),
        "tags": ["teachers", "staff", "qualifications", "experience", "faculty"],
        "related": ["class_size", "curriculum"],
    },
    {
        "key": "tour_parking",
        "question": "Is there parking when we come for a tour?",
        "answer": (
            "Yes, there is free visitor parking beside the Main Reception: tell the guard at the gate you're here "
            "for a tour and show your booking reference. The car park is busiest at drop-off (07:15-07:50) and "
            "pick-up (15:00-15:30). If you come by MRT, Tampines West station is a 10-minute walk."
        ),
        "tags": ["parking", "car park", "tour", "visitor parking", "drive", "where to park"],
        "related": ["tour_what", "location", "tour_child"],
    },
    {
        "key": "tour_what",
        "question": "How long does the school tour take and what happens on it?",
        "answer": (
            "A tour lasts about 60 minutes. An admissions officer meets you at the Main Reception and shows you "
            "classrooms in action, the Innovation Lab, library, pool and sports hall, and you finish with 15 minutes "
            "of questions over coffee. Tours run at 09:00, 11:00, 14:00 and 16:00 on weekdays, in groups of up to "
            "five families. Please arrive 10 minutes early and bring photo ID to sign in."
        ),
        "tags": ["tour", "visit", "how long", "duration", "what to expect", "campus tour", "tour length",
                 "tour times", "show around"],
        "related": ["tour_parking", "tour_child", "tour_weekend"],
    },
    {
        "key": "tour_child",
        "question": "Can I bring my child on the tour?",
        "answer": (
            "Yes, children are very welcome on the tour; it helps them feel at home before their first day. Older "
            "children can spend a few minutes in a class of their year group if the teacher is free. If you bring a "
            "toddler we can lend you a stroller, and please tell us when booking if anyone needs step-free access."
        ),
        "tags": ["bring child", "tour", "children on the tour", "kids welcome", "family visit", "stroller"],
        "related": ["tour_what", "tour_parking"],
    },
    {
        "key": "tour_weekend",
        "question": "Can I visit on a weekend?",
        "answer": (
            "Tours run Monday to Friday so you can see the school in action. If you can't make a weekday, ask for a "
            "callback: admissions can show you around on a video call, and we hold an Open Morning on one Saturday "
            "each term (dates on our website)."
        ),
        "tags": ["weekend", "saturday", "sunday", "tour", "open day", "virtual tour", "video call"],
        "related": ["tour_what", "location"],
    },
    {
        "key": "ccas",
        "question": "What after-school activities do you offer?",
        "answer": (
            "We offer more than 60 co-curricular activities (CCAs) each term, from 15:15 to 16:30: football, "
            "basketball, swimming, badminton, robotics, coding, chess, drama, choir, orchestra, art, Mandarin "
            "calligraphy, debating and Model United Nations, among others. CCAs led by our teachers are free; those "
            "run by outside coaches (swim squad, tennis, individual music lessons) cost from S$280 a term. From "
            "Year 3, every child takes at least one CCA."
        ),
        "tags": ["after-school activities", "CCA", "extracurricular", "clubs", "activities", "co-curricular",
                 "music lessons", "sports clubs"],
        "related": ["aftercare", "stem", "facilities"],
    },
    {
        "key": "aftercare",
        "question": "Do you offer after-school care for working parents?",
        "answer": (
            "Yes. Late Stay runs until 18:30 on school days for Nursery to Year 6, with a snack, homework time and "
            "supervised play, at S$14 an hour booked in the Parent App. Breakfast Club opens at 07:00. In the "
            "school holidays, outside providers run holiday camps on campus."
        ),
        "tags": ["after-school care", "late stay", "childcare", "working parents", "breakfast club",
                 "late pick-up", "holiday camps", "early drop-off"],
        "related": ["ccas", "hours", "holidays"],
    },
    {
        "key": "languages",
        "question": "Which languages do you teach?",
        "answer": (
            "English is the language of instruction. Every child learns Mandarin from Nursery, daily and in ability "
            "groups from native speaker to beginner; from Year 3 children add French or Spanish. Secondary students "
            "can take IGCSE and IB Mandarin, French or Spanish, and mother-tongue Malay and Tamil classes run after "
            "school."
        ),
        "tags": ["languages", "mandarin", "chinese", "french", "spanish", "malay", "tamil", "mother tongue",
                 "foreign language", "bilingual"],
        "related": ["eal", "curriculum"],
    },
    {
        "key": "eal",
        "question": "My child doesn't speak much English. Can they still join?",
        "answer": (
            "Yes. About a fifth of our students learn English as an additional language (EAL). Children up to "
            "Year 9 with little English are supported by our EAL specialists in small-group lessons during the "
            "school day (S$1,800 a term, for up to four terms) until they can follow class lessons. From Year 10, "
            "students need enough English for IGCSE and IB courses; we check this at the assessment."
        ),
        "tags": ["EAL", "ESL", "english as an additional language", "english level", "non-english speaker",
                 "language support", "speak english"],
        "related": ["languages", "sen", "apply"],
    },
    {
        "key": "sen",
        "question": "Do you support children with special educational needs?",
        "answer": (
            "Yes. Our Learning Support team (two SENCOs, specialist teachers and a counsellor) supports children "
            "with mild to moderate needs such as dyslexia, dyspraxia, ADHD or autism, in class and in small groups. "
            "Please share any reports or assessments with your application so we can check we can meet your "
            "child's needs; we agree a support plan with you before they start. Individual support beyond the "
            "standard programme costs from S$85 a session."
        ),
        "tags": ["special educational needs", "SEN", "learning support", "dyslexia", "ADHD", "autism",
                 "learning difficulties", "SENCO", "inclusion", "counsellor"],
        "related": ["eal", "class_size", "apply"],
    },
    {
        "key": "hours",
        "question": "What are the school hours?",
        "answer": (
            "Nursery and Kindergarten: 08:00-14:30 (Nursery also has a half-day option until 12:00). Primary: "
            "07:50-15:10. Secondary: 07:40-15:20. On Fridays Primary finishes at 13:30. The gates open at 07:15 "
            "and CCAs run until 16:30."
        ),
        "tags": ["school hours", "school day", "start time", "finish time", "timetable", "drop off time",
                 "pick up time", "what time"],
        "related": ["aftercare", "bus", "holidays"],
        "translations": {
            "zh-hans": {
                "question": "学校的上课时间是几点到几点？",
                "answer": (
                    "幼儿班和幼稚园：08:00-14:30（幼儿班也有半天课程，到12:00）。小学：07:50-15:10。中学：07:40-15:20。"
                    "星期五小学13:30放学。校门07:15开，课外活动到16:30结束。"
                ),
            },
        },
    },
    {
        "key": "holidays",
        "question": "When are the school holidays?",
        "answer": (
            "We have three terms. Term 1 runs from mid-August to mid-December with a one-week October break; "
            "Term 2 from early January to late March with a one-week break at Chinese New Year; Term 3 from "
            "mid-April to late June. The summer holidays run from late June to mid-August, and the school is closed "
            "on Singapore public holidays. Term dates for this year and next are in the Parent App and on our "
            "website."
        ),
        "tags": ["holidays", "term dates", "school calendar", "vacation", "breaks", "academic calendar",
                 "public holidays", "terms"],
        "related": ["start_dates", "aftercare", "hours"],
    },
    {
        "key": "security",
        "question": "How do you keep children safe on campus?",
        "answer": (
            "The campus is fenced with a single staffed entrance and security guards round the clock. Visitors sign "
            "in with photo ID and wear a visitor lanyard, and CCTV covers the gates and public areas. Children are "
            "only handed over to adults registered in the Parent App. All staff and bus aunties are "
            "background-checked and trained in child protection every year, and we run regular fire and lockdown "
            "drills."
        ),
        "tags": ["security", "safety", "safeguarding", "CCTV", "guards", "child protection", "safe",
                 "collection"],
        "related": ["nurse", "bus"],
    },
    {
        "key": "nurse",
        "question": "Is there a school nurse?",
        "answer": (
            "Yes. Our health clinic has two registered nurses on duty from 07:15 to 17:00 on school days. They give "
            "first aid and prescribed medicines (with your signed consent form), manage allergy and asthma care "
            "plans and call you if your child is unwell. Children with a fever or an infectious illness should stay "
            "at home until they have been well for 24 hours. Please keep vaccinations up to date; we keep a copy "
            "of the record."
        ),
        "tags": ["nurse", "health", "clinic", "medical", "medicine", "sick", "first aid", "illness",
                 "vaccination", "unwell"],
        "related": ["dietary", "security"],
    },
    {
        "key": "homework",
        "question": "How much homework do children get?",
        "answer": (
            "Homework grows with age: in Years 1-2, daily reading and a short maths activity (about 15 minutes); "
            "Years 3-6, 30-45 minutes a day; Secondary, 1-2 hours a day, more in IGCSE and IB years. Homework is set "
            "on Google Classroom, and Homework Club in the library runs until 16:30 for children who prefer to do it "
            "at school."
        ),
        "tags": ["homework", "assignments", "workload", "study", "google classroom"],
        "related": ["assessment", "aftercare"],
    },
    {
        "key": "assessment",
        "question": "How do you assess students and report their progress?",
        "answer": (
            "Teachers assess continuously in class, and children sit standardised tests (CAT4 and GL Progress "
            "Tests) once a year so we can compare progress internationally. You receive a written report at the end "
            "of each term and meet teachers at parent-teacher conferences in October and March. Secondary students "
            "take IGCSE exams in Year 11 and the IB Diploma in Year 13."
        ),
        "tags": ["assessment", "exams", "tests", "reports", "report card", "grades", "progress",
                 "parent-teacher conference"],
        "related": ["results", "homework", "communication"],
    },
    {
        "key": "results",
        "question": "What are your exam results like?",
        "answer": (
            "In 2026 our IB Diploma students averaged 35 points (the world average is about 30), with a 98% pass "
            "rate, and 21% scored 40 or more. At IGCSE, 71% of grades were A* or A. Graduates go on to universities "
            "in the UK, Australia, Singapore, the US and Canada, including NUS, UCL, Melbourne and Toronto."
        ),
        "tags": ["results", "exam results", "IB results", "IGCSE results", "academic performance", "university",
                 "university destinations"],
        "related": ["curriculum", "assessment", "scholarships"],
    },
    {
        "key": "communication",
        "question": "How does the school keep parents informed?",
        "answer": (
            "The Tampines Green Parent App (iOS and Android) has news, the calendar, absence reporting, bus "
            "tracking, lunch and CCA bookings and payments. Class teachers post a weekly update, the Head sends a "
            "newsletter every Friday, and you can message teachers in the app; they reply within two working days. "
            "For anything urgent, call the school office on +65 6786 1234."
        ),
        "tags": ["communication", "parent app", "updates", "newsletter", "contact teachers", "parent portal",
                 "messages", "informed"],
        "related": ["assessment", "security"],
    },
    {
        "key": "facilities",
        "question": "What facilities and sports does the school have?",
        "answer": (
            "Our 5-hectare campus has a 25 m swimming pool and a learner pool, a full-size football field, an indoor "
            "sports hall with four badminton courts, a climbing wall, tennis courts, a 450-seat theatre, music "
            "rooms, two libraries, science labs, art studios and the Innovation Lab. Children have PE twice a week "
            "and swimming lessons every week from Year 1."
        ),
        "tags": ["facilities", "sports", "swimming pool", "football", "campus", "PE", "theatre", "library",
                 "sports hall"],
        "related": ["ccas", "stem"],
    },
    {
        "key": "devices",
        "question": "Does my child need their own laptop or iPad?",
        "answer": (
            "Not in Nursery to Year 4: the school provides shared iPads. From Year 5 we run a Bring Your Own Device "
            "programme: a MacBook Air or Windows laptop with at least 8 GB of memory is recommended. The IT "
            "Helpdesk sets it up with the school's software and filters, and a discounted bundle is available "
            "through our supplier."
        ),
        "tags": ["laptop", "iPad", "device", "BYOD", "computer", "tablet"],
        "related": ["fees_included", "stem"],
    },
    {
        "key": "trips",
        "question": "Are there school trips and camps?",
        "answer": (
            "Yes. All year groups go on day trips linked to their learning, such as the Science Centre or the "
            "Botanic Gardens. From Year 5 there is a yearly residential trip: a camp in Malaysia in Year 5, Bintan "
            "in Year 6, and trips to Vietnam, Thailand and Cambodia in Secondary, with service projects. Overnight "
            "trips are charged separately (S$600-1,400)."
        ),
        "tags": ["trips", "school trips", "camps", "excursions", "residential", "outdoor education",
                 "overseas trip"],
        "related": ["fees_included", "ccas"],
    },
    {
        "key": "student_pass",
        "question": "Do you help foreign students get a Student's Pass?",
        "answer": (
            "Yes. Children who are not Singapore citizens or permanent residents and not on a Dependant's Pass need "
            "a Student's Pass from ICA. Once you accept our offer, our admissions office submits the application "
            "through ICA's SOLAR system and tells you which documents to provide; it usually takes 2-4 weeks. "
            "Children on a Dependant's Pass don't need one."
        ),
        "tags": ["student's pass", "student pass", "visa", "ICA", "dependant's pass", "immigration",
                 "foreign students", "expat"],
        "related": ["apply", "start_dates"],
    },
    {
        "key": "religion",
        "question": "Is the school religious?",
        "answer": (
            "No. Tampines Green is a secular, non-denominational school. We celebrate the festivals of Singapore's "
            "communities, including Chinese New Year, Hari Raya, Deepavali and Christmas, and teach about world "
            "religions in humanities lessons. A prayer room is open to students and staff."
        ),
        "tags": ["religion", "religious", "secular", "faith", "prayer room", "festivals"],
        "related": ["curriculum", "holidays"],
    },
]

TAMPINES_FAMILIES = [
    {"parent_name": "Priya Raman", "parent_phone": "+6591234567", "parent_email": "priya.raman@example.com",
     "child_name": "Arjun", "child_age": 6, "special_requirements": "Would like to see the Year 1 classrooms."},
    {"parent_name": "Daniel Tan", "parent_phone": "+6592345678", "parent_email": "",  # a family: one seat
     "children": [ChildDetails("Chloe", 4, year_group="K1"), ChildDetails("Lucas", 2)], "special_requirements": ""},
    {"parent_name": "Siti Nurhaliza", "parent_phone": "+6591230011", "parent_email": "siti.n@example.com",
     "child_name": "Aisyah", "child_age": 5, "special_requirements": "Coming with grandparents."},
    {"parent_name": "Kenji Watanabe", "parent_phone": "+6591230012", "parent_email": "kenji.w@example.jp",
     "child_name": "Haruto", "child_age": 8, "special_requirements": "Interested in the Japanese programme."},
    {"parent_name": "Rachel Lim", "parent_phone": "+6591230013", "parent_email": "",
     "child_name": "Ethan", "child_age": 3, "special_requirements": ""},
    {"parent_name": "Arun Pillai", "parent_phone": "+6591230014", "parent_email": "arun.pillai@example.com",
     "child_name": "Meera", "child_age": 11, "special_requirements": "Wheelchair user: step-free route please."},
    {"parent_name": "Grace Chua", "parent_phone": "+6591230015", "parent_email": "grace.chua@example.com",
     "child_name": "Lucas", "child_age": 7, "special_requirements": ""},
    {"parent_name": "Oliver Schmidt", "parent_phone": "+6591230016", "parent_email": "o.schmidt@example.de",
     "child_name": "Lena", "child_age": 9, "special_requirements": "Relocating from Munich in January."},
    {"parent_name": "Farah Aziz", "parent_phone": "+6591230017", "parent_email": "",
     "child_name": "Zara", "child_age": 4, "special_requirements": ""},
    {"parent_name": "Wei Jie Ong", "parent_phone": "+6591230018", "parent_email": "weijie.ong@example.com",
     "child_name": "Jia Hui", "child_age": 12, "special_requirements": "Would like to meet the IB coordinator."},
]

# due_in_days: when the call is due, from the seed's today (-1: overdue since yesterday).
TAMPINES_CALLBACKS = [
    {"parent_name": "Mei Ling Wong", "parent_phone": "+6593456789", "best_time": "afternoon",
     "topic": "Scholarships for Year 7 entry", "due_in_days": 0},
    {"parent_name": "Ravi Shankar", "parent_phone": "+6591230021", "best_time": "morning",
     "topic": "Moving from Chennai mid-year: which year group?", "due_in_days": -1},
    {"parent_name": "Jessica Ho", "parent_phone": "+6591230022", "best_time": "specific", "specific_time": "15:30",
     "topic": "School bus from Pasir Ris", "due_in_days": 0},
    {"parent_name": "Tom Bradley", "parent_phone": "+6591230023", "best_time": "evening",
     "topic": "Learning support for dyslexia", "due_in_days": 3},
]

# --- Riverside Montessori Academy (London) ----------------------------------------

RIVERSIDE_SCHOOL = {
    "slug": "riverside",
    "name": "Riverside Montessori Academy",
    "time_zone": "Europe/London",
    "address": "48 Towpath Lane, Richmond upon Thames, London TW9 2QD",
    "contact_email": "office@riversidemontessori.org.uk",
    "contact_phone": "+442079460123",
    "default_phone_region": "GB",
    "tour_start_times": ["10:00", "15:30"],
    "tour_duration_minutes": 45,
    "seats_per_tour": 3,
    "max_advance_days": 21,
    "min_notice_hours": 48,
    "closed_weekdays": [6],
    "chatwoot_inbox_ids": [2],
    "whatsapp_phone_number_id": "100000000000002",
    "is_active": True,
}

RIVERSIDE_HOLIDAYS = [
    (D(2026, 12, 25), "Christmas Day"),
    (D(2026, 12, 28), "Boxing Day (substitute day)"),
    (D(2027, 1, 1), "New Year's Day"),
    (D(2027, 3, 26), "Good Friday"),
    (D(2027, 3, 29), "Easter Monday"),
    (D(2027, 5, 3), "Early May bank holiday"),
    (D(2027, 5, 31), "Spring bank holiday"),
    (D(2027, 8, 30), "Summer bank holiday"),
    (D(2027, 12, 27), "Christmas Day (substitute day)"),
    (D(2027, 12, 28), "Boxing Day (substitute day)"),
]

RIVERSIDE_FAQS = [
    {
        "key": "fees",
        "question": "What are your school fees?",
        "answer": (
            "Fees for 2026/27 are charged per term (three terms a year): Toddler Community (ages 2-3), five "
            "mornings 08:30-12:30, £4,150, or full days £6,900; Children's House (ages 3-6), full days, £6,350; "
            "Lower and Upper Elementary (ages 6-11), £6,950. Fees include VAT where it applies, lunches and "
            "snacks. There is a £150 registration fee and a £1,500 deposit, which is credited against your final "
            "term's fees."
        ),
        "tags": ["fees", "tuition", "cost", "price", "school fees", "termly fees", "how much"],
        "related": ["funded_hours", "extras", "payment", "sibling_discount"],
    },
    {
        "key": "funded_hours",
        "question": "Do you accept government-funded childcare hours?",
        "answer": (
            "Yes. We are registered with the London Borough of Richmond upon Thames for Early Years funding, so "
            "eligible 2-year-olds, all 3- and 4-year-olds (15 hours) and children of working parents (30 hours) "
            "can use their funded hours with us during term time; the funding is deducted from your invoice. A "
            "consumables charge of £4.50 a day covers meals, snacks and materials, which the funding doesn't. "
            "Please bring your 11-digit eligibility code when you register."
        ),
        "tags": ["funded hours", "15 hours", "30 hours", "free childcare", "government funding",
                 "eligibility code", "early years funding"],
        "related": ["fees", "payment", "age"],
    },
    {
        "key": "extras",
        "question": "What's included in the fees and what costs extra?",
        "answer": (
            "Fees cover all Montessori materials, lunches and snacks, Forest School, day trips and termly progress "
            "reports. Optional extras are after-school clubs (£9-14 a session), wraparound care before and after "
            "school, individual music lessons (from £210 a term) and the Upper Elementary residential trip (about "
            "£420)."
        ),
        "tags": ["extras", "extra costs", "included", "additional fees", "hidden costs"],
        "related": ["fees", "clubs", "wraparound"],
    },
    {
        "key": "payment",
        "question": "Can we pay the fees monthly?",
        "answer": (
            "Yes. Fees are due by the first day of each term, or you can spread them over ten monthly Direct Debit "
            "payments (September to June) at no extra charge. We accept Tax-Free Childcare for eligible children "
            "under 12 and employer childcare vouchers. We ask for a full term's written notice before a child "
            "leaves, otherwise a term's fees are payable in lieu of notice."
        ),
        "tags": ["payment", "monthly", "direct debit", "instalments", "pay", "tax-free childcare",
                 "childcare vouchers", "notice period"],
        "related": ["fees", "funded_hours", "sibling_discount"],
    },
    {
        "key": "sibling_discount",
        "question": "Do you offer a sibling discount?",
        "answer": (
            "Yes: 5% off the second child's fees and 10% off the third and any further children while they attend "
            "at the same time. The discount applies to tuition only, not to clubs or wraparound care."
        ),
        "tags": ["sibling", "siblings", "discount", "brother", "sister", "second child"],
        "related": ["fees", "bursary"],
    },
    {
        "key": "bursary",
        "question": "Are bursaries available?",
        "answer": (
            "Yes. We set aside 5% of our fee income for means-tested bursaries worth 10% to 100% of the fees, for "
            "children joining Lower or Upper Elementary. Apply with an income statement by 31 January for "
            "September entry; an independent company carries out a confidential assessment. We don't offer "
            "academic scholarships."
        ),
        "tags": ["bursary", "bursaries", "financial aid", "scholarship", "means-tested", "financial assistance",
                 "fee assistance"],
        "related": ["fees", "sibling_discount", "apply"],
    },
    {
        "key": "curriculum",
        "question": "What is the Montessori approach and what do children learn?",
        "answer": (
            "We are an accredited Montessori school. Children learn in mixed-age classrooms with hands-on "
            "Montessori materials, choosing their work during a three-hour uninterrupted work cycle each morning, "
            "guided by a trained Montessori teacher. Children's House follows the Early Years Foundation Stage "
            "(EYFS); Elementary covers everything in the English National Curriculum (English, maths, science, "
            "history, geography, art, music, PE) through Montessori's Cosmic Education and project work."
        ),
        "tags": ["montessori", "curriculum", "approach", "method", "philosophy", "EYFS", "national curriculum",
                 "subjects", "work cycle", "teaching"],
        "related": ["mixed_age", "stem", "assessment"],
    },
    {
        "key": "mixed_age",
        "question": "Why are the classes mixed ages?",
        "answer": (
            "Montessori classes span three years, for example ages 3 to 6 in Children's House. Younger children "
            "learn by watching older ones, and older children consolidate what they know by helping the younger "
            "ones. Each child stays with the same teacher for three years, so the teacher knows them very well, and "
            "every child works at their own pace rather than the pace of a year group."
        ),
        "tags": ["mixed age", "mixed-age classes", "age groups", "year groups", "three-year cycle",
                 "vertical grouping"],
        "related": ["curriculum", "class_size"],
    },
    {
        "key": "stem",
        "question": "Do the children learn science, coding or robotics?",
        "answer": (
            "Yes. Science is part of every day: gardening, nature study, experiments and the Montessori Great "
            "Lessons on the universe and life. From age 6, children have a weekly Tinker Lab with simple "
            "electronics, Bee-Bot and Scratch coding and Lego WeDo robotics kits, and Upper Elementary children "
            "enter the Young Engineers challenge each spring. There are no screens in the Toddler and Children's "
            "House classrooms."
        ),
        "tags": ["science", "STEM", "coding", "robotics", "technology", "tinker lab", "screens", "engineering"],
        "related": ["curriculum", "clubs", "outdoor"],
    },
    {
        "key": "lunch",
        "question": "Do children get lunch at school?",
        "answer": (
            "Yes. Our cook prepares a fresh, hot lunch every day in our own kitchen, mostly with organic, seasonal "
            "ingredients, and there is always a vegetarian main. Children eat together in small groups at tables "
            "they lay themselves. Lunch, a mid-morning snack and an afternoon snack are included in the fees, and "
            "the three-week menu is in the parent app."
        ),
        "tags": ["lunch", "food", "meals", "snacks", "kitchen", "menu", "cook", "eat"],
        "related": ["dietary", "hours"],
    },
    {
        "key": "dietary",
        "question": "Can you manage allergies and special diets?",
        "answer": (
            "Yes. We are a nut-free school. Our cook prepares vegetarian, vegan, halal, gluten-free and dairy-free "
            "meals, and any diet your child needs for medical reasons. Before your child starts we agree a care plan "
            "for any allergy with you, and staff are trained in paediatric first aid and in using adrenaline "
            "auto-injectors (EpiPens)."
        ),
        "tags": ["allergies", "allergy", "food allergies", "dietary requirements", "special diet", "vegetarian",
                 "vegan", "halal", "gluten free", "nut free", "dairy free"],
        "related": ["lunch", "health"],
    },
    {
        "key": "transport",
        "question": "Do you run a school bus?",
        "answer": (
            "We don't run a school bus. Most families walk, cycle or scoot, and we have covered bike and scooter "
            "parking. A staffed walking bus leaves Richmond station at 08:05 every school day and returns there at "
            "15:30, free of charge. Buses 65 and 371 stop at the end of Towpath Lane."
        ),
        "tags": ["bus", "school bus", "transport", "walking bus", "commute", "cycle", "train station",
                 "public transport"],
        "related": ["tour_parking", "hours"],
    },
    {
        "key": "uniform",
        "question": "Is there a school uniform?",
        "answer": (
            "Not a formal one. Children wear comfortable clothes they can manage themselves (no laces for "
            "under-fives, please) with a navy Riverside sweatshirt or fleece. Everyone needs wellies and a "
            "waterproof suit for Forest School. Sweatshirts are sold at the office for £18, and we run a pre-loved "
            "clothes rail."
        ),
        "tags": ["uniform", "dress code", "clothes", "what to wear", "sweatshirt", "wellies", "waterproofs"],
        "related": ["outdoor", "extras"],
    },
    {
        "key": "apply",
        "question": "How do we apply?",
        "answer": (
            "1) Come on a tour. 2) Complete the registration form on our website and pay the £150 registration fee. "
            "3) We invite your child to a relaxed stay-and-play morning (under 6) or a taster day (6 and over), and "
            "ask their current nursery or school for a report. 4) We offer a place, usually within a week. "
            "5) Accept the offer by paying the £1,500 deposit."
        ),
        "tags": ["apply", "application", "admissions", "register", "registration", "enrol", "how to join",
                 "taster day", "stay and play"],
        "related": ["start_dates", "age", "tour_child"],
    },
    {
        "key": "start_dates",
        "question": "When can my child start?",
        "answer": (
            "Toddler Community and Children's House take new children all year round, from the term after their "
            "second birthday, as places allow. Elementary children usually join in September, and can join in "
            "January or April if there's a place. We recommend registering a year ahead: Children's House places "
            "for September are usually full by the spring."
        ),
        "tags": ["start date", "when to start", "intake", "join", "september", "mid-year", "enrolment dates",
                 "deadline", "waiting list"],
        "related": ["apply", "age", "settling_in"],
    },
    {
        "key": "age",
        "question": "What ages do you take?",
        "answer": (
            "We take children from 2 to 11 years old: Toddler Community (2 to 3), Children's House (3 to 6, "
            "including the Reception year), Lower Elementary (6 to 9) and Upper Elementary (9 to 11). Children move "
            "on to secondary school at 11."
        ),
        "tags": ["age", "ages", "how old", "age range", "minimum age", "toddler", "nursery", "reception"],
        "related": ["start_dates", "mixed_age", "toilet"],
    },
    {
        "key": "toilet",
        "question": "Does my child need to be toilet trained?",
        "answer": (
            "No. Toddler Community children don't need to be toilet trained: we support toilet learning together "
            "with you, and families provide nappies and wipes. Children joining Children's House are usually out of "
            "nappies, but we'll support any child who isn't quite there yet."
        ),
        "tags": ["toilet training", "potty", "nappies", "diapers", "toilet trained", "toileting"],
        "related": ["age", "nap", "settling_in"],
    },
    {
        "key": "nap",
        "question": "Do toddlers nap at school?",
        "answer": (
            "Yes. Full-day Toddler Community children rest after lunch in our quiet sleep room on their own named "
            "mat and bedding, following your home routine as far as we can. Children's House children who still "
            "need a nap can rest too; the others have quiet time with books."
        ),
        "tags": ["nap", "sleep", "rest", "naptime", "quiet time", "sleep room"],
        "related": ["toilet", "hours"],
    },
    {
        "key": "class_size",
        "question": "How many children are in each class?",
        "answer": (
            "Toddler Community has 12 children with three adults (1:4). Children's House classes have up to 24 "
            "children with a Montessori teacher and two assistants (about 1:8), and Elementary classes up to 24 "
            "children with a teacher and an assistant (1:12)."
        ),
        "tags": ["class size", "ratio", "children per class", "adults per child", "staff ratio", "small classes"],
        "related": ["mixed_age", "sen"],
    },
    {
        "key": "settling_in",
        "question": "How does settling in work?",
        "answer": (
            "New children settle in gradually over one to two weeks. The first visit is one hour with you in the "
            "room, and the time grows as your child gets comfortable. Each child has a key person as their first "
            "point of contact, and we call or message you during the first days to tell you how it's going."
        ),
        "tags": ["settling in", "first day", "transition", "key person", "separation", "starting school",
                 "settle"],
        "related": ["start_dates", "toilet", "communication"],
    },
    {
        "key": "tour_parking",
        "question": "Is there parking for the tour?",
        "answer": (
            "We have no visitor car park, but there is pay-and-display parking on Towpath Lane and the Old Deer "
            "Park car park is a 5-minute walk away. We recommend coming by train: Richmond station is a 12-minute "
            "walk. Please don't park in the school drop-off bay."
        ),
        "tags": ["parking", "car park", "tour", "drive", "visitor parking", "where to park", "directions",
                 "address"],
        "related": ["tour_what", "transport"],
    },
    {
        "key": "tour_what",
        "question": "How long is the tour and what will we see?",
        "answer": (
            "A tour takes 45 minutes. A member of our admissions team shows you the classrooms while the children "
            "are working (we observe quietly for a few minutes, in true Montessori style), the garden and Forest "
            "School area, and answers your questions. Tours start at 10:00 and 15:30, Monday to Saturday, for up to "
            "three families."
        ),
        "tags": ["tour", "visit", "how long", "duration", "what to expect", "tour length", "show around",
                 "tour times", "saturday"],
        "related": ["tour_parking", "tour_child", "apply"],
    },
    {
        "key": "tour_child",
        "question": "Should I bring my child to the tour?",
        "answer": (
            "You're welcome to, though many parents come on their own first so they can concentrate on the school; "
            "your child will have their own stay-and-play or taster day later in the admissions process. Babies and "
            "toddlers in a carrier or buggy are fine, and there is step-free access throughout."
        ),
        "tags": ["bring child", "tour", "children on the tour", "kids", "buggy", "baby"],
        "related": ["tour_what", "apply"],
    },
    {
        "key": "clubs",
        "question": "What after-school clubs do you offer?",
        "answer": (
            "From age 4, children can choose clubs from 15:15 to 16:15: Forest School explorers, football, ballet, "
            "chess, gardening, French, Lego robotics, art, yoga and choir, at £9-14 a session, booked per term. "
            "Individual piano, violin and guitar lessons run during the school day from £210 a term."
        ),
        "tags": ["after-school clubs", "clubs", "extracurricular", "activities", "music lessons", "ballet",
                 "football"],
        "related": ["wraparound", "extras", "stem"],
    },
    {
        "key": "wraparound",
        "question": "Do you offer breakfast club or after-school care?",
        "answer": (
            "Yes, for working parents: Breakfast Club from 07:30 (£8.50, breakfast included) and After-School Care "
            "until 18:00 (£22 for the session, with a snack and tea). Book regular sessions for the term, or "
            "ad hoc in the app up to 24 hours ahead. Holiday Club runs for six weeks of the school holidays for "
            "children aged 3 to 11, at £62 a day."
        ),
        "tags": ["wraparound care", "breakfast club", "after-school care", "late pick-up", "working parents",
                 "holiday club", "childcare", "early drop-off"],
        "related": ["clubs", "hours", "term_dates"],
    },
    {
        "key": "languages",
        "question": "Do children learn other languages?",
        "answer": (
            "Yes. French is part of daily life in every class from age 3, with a native-speaking teacher, and "
            "Spanish is added from age 7 (two lessons a week). Bilingual children are celebrated: families are "
            "invited to share their home languages, and our library keeps dual-language books."
        ),
        "tags": ["languages", "french", "spanish", "bilingual", "foreign language", "second language",
                 "home language"],
        "related": ["curriculum", "clubs"],
    },
    {
        "key": "sen",
        "question": "How do you support children with special educational needs?",
        "answer": (
            "Montessori's individual approach suits many children with additional needs. Our SENCo works with "
            "teachers, parents and outside specialists (speech and language therapists, occupational therapists, "
            "educational psychologists) to plan support. We welcome children with an Education, Health and Care "
            "plan (EHCP) when we can meet their needs: please share any reports when you register so we can talk "
            "it through with you."
        ),
        "tags": ["special educational needs", "SEN", "SEND", "SENCo", "EHCP", "additional needs",
                 "learning support", "dyslexia", "autism", "speech therapy"],
        "related": ["class_size", "apply"],
    },
    {
        "key": "hours",
        "question": "What are the school hours?",
        "answer": (
            "Toddler Community mornings are 08:30-12:30, full days 08:30-15:15. Children's House and Elementary: "
            "08:30-15:15, with drop-off between 08:20 and 08:40. Breakfast Club from 07:30 and After-School Care "
            "until 18:00 extend the day."
        ),
        "tags": ["school hours", "school day", "start time", "finish time", "drop-off", "pick-up time",
                 "timings", "what time"],
        "related": ["wraparound", "term_dates", "nap"],
    },
    {
        "key": "term_dates",
        "question": "When are the term dates and holidays?",
        "answer": (
            "There are three terms, each with a half-term break: Autumn (early September to mid-December), Spring "
            "(early January to late March) and Summer (mid-April to mid-July). We are closed on all UK bank "
            "holidays. This year's and next year's term dates are on our website and in the parent app."
        ),
        "tags": ["term dates", "holidays", "half term", "school calendar", "bank holidays", "vacation",
                 "christmas holidays", "summer holidays"],
        "related": ["start_dates", "wraparound", "hours"],
    },
    {
        "key": "safety",
        "question": "How do you keep the children safe?",
        "answer": (
            "Safeguarding comes first: all staff have enhanced DBS checks and annual safeguarding training, and we "
            "have two Designated Safeguarding Leads. The building has a secure entry system and the garden is fully "
            "fenced. Children are only handed over to adults on your collection list, and anyone new needs your "
            "collection password."
        ),
        "tags": ["safety", "safeguarding", "security", "DBS", "collection", "safe", "secure",
                 "child protection"],
        "related": ["inspection", "health"],
    },
    {
        "key": "inspection",
        "question": "What was your last inspection rating?",
        "answer": (
            "Ofsted rated Riverside Outstanding in all areas at our last inspection in March 2024, noting the "
            "children's exceptional independence and love of learning. The full report is on the Ofsted website "
            "and linked from our home page."
        ),
        "tags": ["ofsted", "inspection", "rating", "inspection report", "outstanding", "quality", "reputation"],
        "related": ["safety", "curriculum"],
    },
    {
        "key": "health",
        "question": "What happens if my child is ill or needs medicine?",
        "answer": (
            "All our teachers hold a paediatric first aid certificate, and we can give prescribed medicines once "
            "you sign the consent form in the parent app. If your child becomes unwell at school we call you to "
            "collect them. Children with a temperature, or who have had sickness or diarrhoea, should stay at home "
            "until they have been well for 48 hours."
        ),
        "tags": ["illness", "sick", "medicine", "medication", "first aid", "health", "nurse", "unwell",
                 "temperature", "fever"],
        "related": ["dietary", "safety"],
    },
    {
        "key": "homework",
        "question": "Do children get homework?",
        "answer": (
            "Very little. Under-sevens have none; we encourage reading together every day. Elementary children have "
            "a weekly reading log and an optional family project linked to what they are studying, and Upper "
            "Elementary children practise maths and spelling for 20-30 minutes a few times a week to prepare for "
            "secondary school."
        ),
        "tags": ["homework", "reading", "assignments", "workload"],
        "related": ["assessment", "secondary"],
    },
    {
        "key": "assessment",
        "question": "How do you assess progress without grades?",
        "answer": (
            "We don't give grades or marks. Teachers observe and record each child's work every day in Transparent "
            "Classroom, and you receive a written report twice a year and a parent-teacher meeting each term. "
            "Children's House children are assessed against the EYFS, and Upper Elementary children take a "
            "standardised English and maths test once a year to help with secondary school applications."
        ),
        "tags": ["assessment", "progress", "grades", "reports", "tests", "exams", "observation",
                 "parent-teacher meeting"],
        "related": ["communication", "homework", "secondary"],
    },
    {
        "key": "communication",
        "question": "How will I know how my child is doing each day?",
        "answer": (
            "We use the Transparent Classroom app: you see photos and notes of your child's work, the lessons they "
            "were given, menus and messages from the teacher. Teachers are happy to chat briefly at pick-up, and you "
            "can book a longer meeting at any time. The office sends a newsletter every other Friday."
        ),
        "tags": ["communication", "parent app", "transparent classroom", "updates", "newsletter",
                 "contact teacher", "photos", "daily update", "informed"],
        "related": ["assessment", "settling_in"],
    },
    {
        "key": "outdoor",
        "question": "Do children spend time outdoors?",
        "answer": (
            "Every day, whatever the weather. Our large riverside garden has vegetable beds, a mud kitchen and a "
            "climbing area, and every child from age 3 has a Forest School afternoon each week in Old Deer Park "
            "with our qualified Forest School leader. Please send wellies and waterproofs."
        ),
        "tags": ["outdoor", "outside", "garden", "forest school", "nature", "play", "playground", "sports"],
        "related": ["uniform", "clubs"],
    },
    {
        "key": "secondary",
        "question": "Where do children go after Riverside?",
        "answer": (
            "At 11 our children move on to a wide range of secondary schools, both local state schools such as "
            "Richmond Park Academy and Christ's School and independent schools such as Hampton, Lady Eleanor Holles, "
            "St Paul's and Kew House. Our Head meets every Year 5 family to plan secondary applications, and we "
            "prepare Upper Elementary children for 11+ entrance tests and interviews in small groups, without "
            "tutoring pressure."
        ),
        "tags": ["secondary school", "11+", "next school", "leavers", "destinations", "entrance exams",
                 "after year 6"],
        "related": ["assessment", "age"],
    },
]

RIVERSIDE_FAMILIES = [
    {"parent_name": "Sophie Clarke", "parent_phone": "+447911123456", "parent_email": "sophie.clarke@example.co.uk",
     "child_name": "Oliver", "child_age": 3, "special_requirements": "Coming with a buggy; step-free route please."},
    {"parent_name": "James Okafor", "parent_phone": "+447700123456", "parent_email": "",
     "child_name": "Ada", "child_age": 7, "special_requirements": ""},
    {"parent_name": "Amelia Hughes", "parent_phone": "+447911123401", "parent_email": "amelia.h@example.co.uk",
     "child_name": "Freddie", "child_age": 4, "special_requirements": ""},
    {"parent_name": "Mohammed Rahman", "parent_phone": "+447911123402", "parent_email": "m.rahman@example.co.uk",
     "child_name": "Yusuf", "child_age": 5, "special_requirements": "Both parents attending."},
    {"parent_name": "Chiara Rossi", "parent_phone": "+447911123403", "parent_email": "",
     "child_name": "Giulia", "child_age": 2, "special_requirements": "Asking about the toddler community."},
    {"parent_name": "Ben Fletcher", "parent_phone": "+447911123404", "parent_email": "ben.fletcher@example.co.uk",
     "child_name": "Isla", "child_age": 6, "special_requirements": ""},
    {"parent_name": "Nadia Kowalski", "parent_phone": "+447911123405", "parent_email": "nadia.k@example.pl",
     "child_name": "Zofia", "child_age": 3, "special_requirements": "Speaks Polish at home."},
    {"parent_name": "Harriet Lane", "parent_phone": "+447911123406", "parent_email": "",
     "child_name": "Theo", "child_age": 8, "special_requirements": ""},
]

# due_in_days: when the call is due, from the seed's today (-1: overdue since yesterday).
RIVERSIDE_CALLBACKS = [
    {"parent_name": "Hannah Fischer", "parent_phone": "+447400123456", "best_time": "morning",
     "topic": "Using 30 funded hours for a 3-year-old", "due_in_days": 0},
    {"parent_name": "Priya Shah", "parent_phone": "+447911123411", "best_time": "afternoon",
     "topic": "Waiting list for Children's House", "due_in_days": -1},
    {"parent_name": "George Evans", "parent_phone": "+447911123412", "best_time": "specific", "specific_time": "10:15",
     "topic": "Settling-in for a shy four-year-old", "due_in_days": 2},
]

# --- Every school ---------------------------------------------------------------

GLOBAL_FAQS = [
    {
        "key": "privacy",
        "question": "How do you use my personal data?",
        "answer": (
            "We use the details you share in this chat (such as your name, phone number, e-mail and your child's "
            "name and age) only to arrange your tour or callback and to answer your admissions enquiry. They are "
            "stored securely, shared only with the school's admissions team and its CRM, and never sold. "
            "Conversations are kept for 12 months and then deleted. You can ask to see, correct or delete your data "
            "at any time by e-mailing the school."
        ),
        "tags": ["privacy", "personal data", "data protection", "GDPR", "PDPA", "privacy policy", "information"],
        "related": ["delete_data", "assistant"],
    },
    {
        "key": "assistant",
        "question": "Am I chatting with a real person?",
        "answer": (
            "You're chatting with the school's virtual admissions assistant, an automated concierge that answers "
            "common questions and books tours. The admissions team reviews conversations and can take over at any "
            "time: just ask to speak to a person or request a callback."
        ),
        "tags": ["bot", "AI", "human", "real person", "chatbot", "virtual assistant", "speak to someone"],
        "related": ["privacy"],
    },
    {
        "key": "delete_data",
        "question": "How do I stop messages or delete my data?",
        "answer": (
            "Reply STOP on WhatsApp at any time and we won't message you again. To have your conversation and "
            "contact details deleted, ask in this chat or e-mail the school office; we confirm once it's done, "
            "within 30 days."
        ),
        "tags": ["unsubscribe", "stop messages", "delete data", "opt out", "erase", "remove my details"],
        "related": ["privacy"],
    },
]

SCHOOLS = [
    {
        "fields": TAMPINES_SCHOOL,
        "holidays": TAMPINES_HOLIDAYS,
        "staff_day": (9, "Staff development day"),
        "faqs": TAMPINES_FAQS,
        "families": TAMPINES_FAMILIES,
        "callbacks": TAMPINES_CALLBACKS,
    },
    {
        "fields": RIVERSIDE_SCHOOL,
        "holidays": RIVERSIDE_HOLIDAYS,
        "staff_day": (12, "Montessori training day"),
        "faqs": RIVERSIDE_FAQS,
        "families": RIVERSIDE_FAMILIES,
        "callbacks": RIVERSIDE_CALLBACKS,
    },
]
